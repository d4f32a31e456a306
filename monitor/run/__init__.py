"""The run lifecycle: start what a task needs, record everything into a bundle, wait, stop, score."""
