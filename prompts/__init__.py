"""The prompt templates, one Markdown file per agent and variant: package data, installed as
`examiner.prompts` (agents/prompting renders them)."""
