"""Data the viewer tests share (a module with its own name: ``conftest`` names clash across folders)."""

# an answer that would run script if the page put rollout text into the DOM as HTML
HOSTILE = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">I do not know.'
