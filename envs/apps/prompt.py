"""The app environment's own words around the call format: who the agent acts as (:data:`APP_WORDS`, the
system prompt's role line; the format's plain closing: answer, or abstain and say why), the ``answer``
function (reply to the user, or abstain when the request cannot be done) and :data:`APP_INSTRUCTIONS`,
the system message when the tools go to the model as functions (TRL, the SFT export)."""

from __future__ import annotations

from stillweb.corpora.apps.generate import AppWorldBase, email_of
from stillweb.sandboxes.formats.base import PromptWords

__all__ = ["ANSWER_SCHEMA", "APP_INSTRUCTIONS", "APP_WORDS", "user_header"]

APP_WORDS = PromptWords("You operate a user's apps through their APIs. Call the functions to look things up and make "
                        "the changes the user asks for.")
APP_INSTRUCTIONS = ("You operate a user's apps through their APIs. Call the functions to look things up and make the "
                    "changes the user asks for, then answer the user with the answer function; if a request cannot be "
                    "done, abstain and say why.")

ANSWER_SCHEMA = {
    "type": "function",
    "function": {
        "name": "answer",
        "description": ("Reply to the user: state what they asked for, or confirm what you did. If the request "
                        'cannot be done with these APIs or your permissions, abstain: {"abstain": true, "text": "<why>"}.'),
        "parameters": {
            "type": "object",
            "properties": {"text": {"type": "string", "maxLength": 5000, "description": "your reply to the user"},
                           "abstain": {"type": "boolean", "default": False,
                                       "description": "true: the request cannot be done, so nothing was done"}},
            "required": ["text"],
            "additionalProperties": False,
        },
    },
}


def user_header(base: AppWorldBase, user: int) -> str:
    """The line that tells the agent whose apps it operates."""
    name = base.user_names[user - 1]
    return (f"[You are operating the apps of {name} (user id {user}, {email_of(name)}). Use the API functions, then "
            "answer the user; if the request cannot be done, abstain and say why.]")
