"""The question gate's agents: a guesser that answers a question without the corpus, and a checker that
reads the question against its cluster's units alone (examiner/exam/gate/)."""
