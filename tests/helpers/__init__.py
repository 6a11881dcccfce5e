"""Helpers shared by test modules (tests never import helpers from one another)."""
