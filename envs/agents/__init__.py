"""Agents that play the environments: scripted policies (reference, random text) and a chat-endpoint policy."""
