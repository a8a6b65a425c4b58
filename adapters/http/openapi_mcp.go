package http

// mcpPaths documents /mcp (SPEC §11), present when the server runs with --mcp. The body
// is MCP's own JSON-RPC protocol over streamable HTTP, so the document names the
// transport rather than describing each message; the tools list themselves over it.
func mcpPaths() obj {
	rpc := obj{"required": true, "description": "one JSON-RPC 2.0 message of the Model Context Protocol (initialize, tools/list, tools/call, ...)",
		"content": obj{"application/json": obj{"schema": ref("MCPMessage")}}}
	post := op("Send an MCP message (streamable HTTP transport)", nil, obj{
		"200": obj{"description": "the JSON-RPC answer, as application/json or a text/event-stream", "content": obj{
			"application/json": obj{"schema": ref("MCPMessage")}, "text/event-stream": obj{"schema": typ("string", "")}}},
		"202": obj{"description": "a notification or response was accepted"},
	}, "body_too_large")
	post["requestBody"] = rpc
	post["description"] = "Tools act as the authenticated principal: read tools need viewer; run_pipeline, " +
		"run_template and cancel_run appear only with --mcp-allow-mutations and an operator or admin principal; " +
		"propose_run (a change request, SPEC §9.5) needs only an operator or admin. " +
		"A tool error carries the REST error body {\"error\": {code, message, details?}} as its text."
	return obj{mcpRoute: obj{
		"post": post,
		"get": op("Open the MCP server-to-client stream (stateless servers answer 405)", nil, obj{
			"200": obj{"description": "a server keeping MCP sessions streams its messages", "content": obj{
				"text/event-stream": obj{"schema": typ("string", "server-sent events, each one MCPMessage")}}},
			"405": obj{"description": "this server keeps no MCP sessions"}}),
		"delete": op("End an MCP session (stateless servers answer 405)", nil, obj{
			"204": obj{"description": "a server keeping MCP sessions ended the session"},
			"405": obj{"description": "this server keeps no MCP sessions"}}),
	}}
}
