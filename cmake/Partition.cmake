# Partitioned and MPI propagation (partition/): filled in by the partition work.
