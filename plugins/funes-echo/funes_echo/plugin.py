"""Hook implementations of funes-echo (filled in by the plugin-host work)."""
