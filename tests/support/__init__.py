"""Helpers shared by the test modules (on pytest's ``pythonpath``): paths, small worlds, servers."""
