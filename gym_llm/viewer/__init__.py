"""A local web viewer for rollouts files: ``gym-llm view rollouts.jsonl``.

The server (:class:`ViewerServer`, on 127.0.0.1) indexes the file's byte offsets once and serves
the list a page at a time, filtered by env, failure kind, masking and reward, sorted by any
column; a rollout opens as a chat: messages, reasoning, tool calls with their arguments, tool
outputs, and the verifier's details. :func:`write_html` writes the same page, with the first
rollouts inside, as one self-contained file. Text from the rollouts is always shown as text.
"""

from gym_llm.viewer.index import Query, RolloutIndex
from gym_llm.viewer.server import ViewerServer, make_app
from gym_llm.viewer.static import write_html

__all__ = ["Query", "RolloutIndex", "ViewerServer", "make_app", "write_html"]
