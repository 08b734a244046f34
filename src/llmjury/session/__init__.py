"""The pytest integration below the entry point: options and settings, start-up checks, collection and
case sets, fixtures, the controller and the worker, progress and watch."""
