"""The referee: turns board readings into judged moves, runs the game session and keeps its journal."""
