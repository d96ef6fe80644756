"""Use cases of inference: endpoints, pools, model downloads."""
