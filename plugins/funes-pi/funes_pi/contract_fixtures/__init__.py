"""Sample pi sessions and a pi configuration: the fixtures of the funes contract suite."""
