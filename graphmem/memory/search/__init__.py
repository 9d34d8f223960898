"""Search and recall: the ranker, its fusion of retrievers, where candidates come from
(scope views and their cache), and time expressions in queries."""
