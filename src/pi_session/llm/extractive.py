"""placeholder"""
EXTRACTIVE_NOTE = "extractive"
class ExtractiveSummarizer:
    name = "extractive"
    fallback_reason = None
    async def summarize(self, request):
        return EXTRACTIVE_NOTE
