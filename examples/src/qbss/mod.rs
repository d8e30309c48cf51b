//! `qbss-model`: a packet-level simulation of a scavenger-service (QBSS) deployment.
