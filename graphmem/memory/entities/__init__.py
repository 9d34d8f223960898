"""Entity memory: NER results resolved into entities, their relations and provenance."""
