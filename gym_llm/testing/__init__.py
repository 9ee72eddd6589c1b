"""Test support: an OpenAI-compatible model server and helpers that play episodes."""

from gym_llm.testing.episodes import EpisodeResult, play, play_reference

__all__ = ["EpisodeResult", "ModelServer", "play", "play_reference"]


def __getattr__(name: str):
    # The model server pulls in aiohttp's web stack: import it only when asked for.
    if name == "ModelServer":
        from gym_llm.testing.model_server import ModelServer

        return ModelServer
    raise AttributeError(name)
