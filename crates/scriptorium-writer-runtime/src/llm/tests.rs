//! Unit tests of the model clients: specs, keys, backoff, Retry-After and the reply classifier.
