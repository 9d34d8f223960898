"""Episodic memory: tasks, steps, episodes, votes, reflections and their patterns."""
