"""The MCP client of tests/mcp_playwright.rs: the official MCP Python SDK
talking to `ctxgate mcp -- node …/@playwright/mcp/cli.js …`.

    client.py BASE_URL OUT_JSON CTXGATE_ARGS_JSON

It lists the tools, navigates to the login page, types a password into the
field the trimmed snapshot shows, clicks the button by the ref the trimmed
snapshot shows, reads the console, opens a second tab, then kills the
upstream in the middle of a call. Every result it receives, and the error
of the last call, go to OUT_JSON for the Rust test to judge.
"""

import asyncio
import json
import os
import re
import signal
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

BASE, OUT, ARGS = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
TYPED = "Typed-Secret-99"


def dump(result):
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


def text(result):
    return "\n".join(b.get("text", "") for b in dump(result)["content"])


def upstream_pid(marker):
    """The pid of the child of the `ctxgate mcp` process whose command line holds `marker`."""
    procs = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
            stat = open(f"/proc/{pid}/stat").read()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        procs[int(pid)] = (ppid, cmd)
    proxy = [p for p, (_, cmd) in procs.items() if marker.encode() in cmd and b"mcp" in cmd]
    return [p for p, (ppid, _) in procs.items() if ppid in proxy]


async def main():
    out = {"results": {}, "tools": []}
    params = StdioServerParameters(command=ARGS[0], args=ARGS[1:])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            listed = await session.list_tools()
            out["tools"] = [t.name for t in listed.tools]

            async def call(key, tool, arguments):
                result = await session.call_tool(tool, arguments)
                out["results"][key] = dump(result)
                return text(result)

            await call("navigate", "browser_navigate", {"url": f"{BASE}/login.html"})
            snapshot = await call("snapshot", "browser_snapshot", {})
            password = re.search(r"- textbox \[ref=(e\d+)\]: \[ctxgate\] withheld", snapshot).group(1)
            await call("type", "browser_type", {"element": "Password", "target": password, "text": TYPED})
            typed = await call("snapshot_typed", "browser_snapshot", {})
            button = re.search(r'- button "Sign in" \[ref=(e\d+)\]', typed).group(1)
            await call("click", "browser_click", {"element": "Sign in", "target": button})
            await call("console", "browser_console_messages", {})
            await call("tab_new", "browser_tabs", {"action": "new"})
            await call("navigate_other", "browser_navigate", {"url": f"{BASE}/other.html"})
            await call("tabs", "browser_tabs", {"action": "list"})
            try:
                await session.call_tool("browser_evaluate", {"function": "() => 1"})
                out["evaluate"] = "answered"
            except Exception as e:  # the SDK raises on a JSON-RPC error
                out["evaluate"] = str(e)

            async def kill_soon():
                await asyncio.sleep(1.0)
                for pid in upstream_pid(ARGS[ARGS.index("--decision-log") + 1]):
                    os.kill(pid, signal.SIGKILL)

            killer = asyncio.create_task(kill_soon())
            try:
                await session.call_tool("browser_wait_for", {"time": 20})
                out["killed"] = "answered"
            except Exception as e:
                out["killed"] = str(e)
            await killer
            json.dump(out, open(OUT, "w"), indent=1)


try:
    asyncio.run(main())
except BaseException as e:  # the proxy exits with its upstream: closing may raise
    if not os.path.exists(OUT):
        raise
