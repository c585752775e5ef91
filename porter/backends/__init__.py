"""`porter backends`: the per-device backend classes of a project, and skeletons of the target's."""
