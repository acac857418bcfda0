"""The Bedrock Converse adapter over boto3 (``harness.models.BedrockConverseModel``)."""
