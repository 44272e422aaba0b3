"""Wording tasks: relation phrases, verbalisation (English and Chinese), obfuscation, value forms, polish."""
