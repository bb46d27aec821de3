"""Helpers shared by tests and benchmarks (test data builders; no assertions here)."""
