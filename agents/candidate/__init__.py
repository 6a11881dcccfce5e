"""The candidate agent: the target model answering an exam question."""
