"""The multi-turn env: KernelCraftEnv, its tools, its reward and its prompt."""

from kcgym.envs.kernel_env import KernelCraftEnv, episode_seeds
from kcgym.envs.rewards import RewardSpec
from kcgym.envs.tools import TOOLS, openai_tools

__all__ = ["TOOLS", "KernelCraftEnv", "RewardSpec", "episode_seeds", "openai_tools"]
