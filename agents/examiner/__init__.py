"""The examiner agent: writes one question per cluster of units, rewords questions for the wording check,
and extracts units from passages."""
