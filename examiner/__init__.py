"""examiner: audit what language models know about a reference corpus, and audit their judges."""

__version__ = "0.1.0"
