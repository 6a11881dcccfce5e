"""The agents: one folder per agent, each holding its role (the calls it makes through the gateway), the
prompt files it renders (prompts/, installed as package data `examiner.prompts`), its reply schema and its
generation defaults. Installed as `examiner.agents`; methods (exam, judging, meta) call agents, agents call
the gateway.

- examiner/     the question writer (questioner), the paraphraser (the wording check) and the unit extractor
- candidate/    the target model answering an exam question
- judge/        unit judge, reference judge, pairwise judge, G-Eval
- reviser/      RevisEval's reviser
- evaluators/   the evaluators whose assessments meta-evaluation compares
- debaters/     the debaters of MDEval
- referee/      the referee of an MDEval debate
- meta_judge/   JDEval, JDEval-i and BSMEval
- gate/         the question gate's guesser and checker (examiner/exam/gate/)
- prompting/    rendering of prompt files, with every value fenced and escaped

Each role module states its card (`CARD`, agents/card.py): the prompt files it renders with the values
it fills, the reply schemas it asks for and its generation settings.
"""
