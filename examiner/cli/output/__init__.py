"""What the commands print: terminal tables and lines built from the API's results and the reports."""
