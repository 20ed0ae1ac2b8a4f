"""Real-time cloud: seed 001G's service-level-aware resource manager (`rtnetlab slrm`) and seed
001F's admission of virtual service networks (`rtnetlab admit`, `rtnetlab experiment
admission`). The engine computes (crates/core/src/cloud/); this package reads, prints and plots.
See docs/CLOUD.md."""
