"""``llm/SupportDesk-v0``: an online shop's support desk with a simulated customer (tau-bench style)."""

ENVS = {"llm/SupportDesk-v0": "gym_llm.envs.support_desk.env:SupportDeskEnv"}
