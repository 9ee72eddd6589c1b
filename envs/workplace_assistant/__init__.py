"""``llm/WorkplaceAssistant-v0``: office tasks over email, calendar, analytics, projects and CRM.

Port of NeMo Gym's ``workplace_assistant`` (WorkBench).
"""

ENVS = {"llm/WorkplaceAssistant-v0": "gym_llm.envs.workplace_assistant.env:WorkplaceAssistantEnv"}
