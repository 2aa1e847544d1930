"""A local web app: upload a CSV, watch the certified search converge, read the model (``optrules serve``)."""
