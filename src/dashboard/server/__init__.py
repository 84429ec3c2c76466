"""The app server's own work: uploads read in a worker process under limits."""
