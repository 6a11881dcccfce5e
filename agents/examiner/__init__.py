"""The examiner agent: writes one question per cluster of units, and extracts units from passages."""
