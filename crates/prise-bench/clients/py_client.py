"""The official Python SDK client (mcp 2.x) as a benchmark client: sequential
tools/call of `echo`, one latency per call, printed as JSON.

usage: py_client.py CALLS WARMUP (--url URL | -- SERVER ARGS...)
"""

import asyncio
import json
import sys
import time

from mcp import Client
from mcp.client.stdio import StdioServerParameters


async def main():
    calls, warmup = int(sys.argv[1]), int(sys.argv[2])
    if sys.argv[3] == "--url":
        target = sys.argv[4]
    else:
        command = sys.argv[4:]
        target = StdioServerParameters(command=command[0], args=command[1:])
    latencies = []
    async with Client(target) as client:
        for i in range(warmup + calls):
            started = time.perf_counter_ns()
            await client.call_tool("echo", {"message": "hi"})
            if i >= warmup:
                latencies.append(time.perf_counter_ns() - started)
    print(json.dumps({"latencies_ns": latencies}))


asyncio.run(main())
