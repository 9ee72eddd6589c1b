"""gym_llm: Gymnasium environments for training LLMs with reinforcement learning.

``import gym_llm`` registers every env under the ``llm/`` namespace::

    import gymnasium as gym
    import gym_llm

    env = gym.make("llm/Weather-v0")

``gym.make("gym_llm:llm/Weather-v0")`` works without the import.
"""

from gym_llm.check import check
from gym_llm.env import LLMEnv
from gym_llm.registry import env_ids, register_envs, verify
from gym_llm.single_turn import SingleTurnEnv
from gym_llm.tasks import TaskError, TaskRow
from gym_llm.tools import ToolError, tool
from gym_llm.verdict import Verdict

__version__ = "0.1.0"

__all__ = [
    "LLMEnv",
    "SingleTurnEnv",
    "TaskError",
    "TaskRow",
    "ToolError",
    "Verdict",
    "__version__",
    "check",
    "env_ids",
    "tool",
    "verify",
]

register_envs()
