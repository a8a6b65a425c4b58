package http_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A generator needs a name and a group for every operation, a typed schema for every body
// (a bare {"type": "object"} yields map[string]any), a server and examples (SPEC §14.7).
func TestOpenAPIIsFitForGenerators(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rec := e.do(t, http.MethodGet, "/v1/openapi.json", "", nil)
	require.Equal(t, http.StatusOK, rec.Code, "the document needs no token")
	doc := decode(t, rec)

	servers, _ := doc["servers"].([]any)
	require.NotEmpty(t, servers)
	require.NotEmpty(t, servers[0].(map[string]any)["url"])
	var tagNames []string
	for _, tg := range doc["tags"].([]any) {
		tagNames = append(tagNames, tg.(map[string]any)["name"].(string))
	}

	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	ids := map[string]string{}
	var bare, examples []string
	for path, item := range doc["paths"].(map[string]any) {
		for method, raw := range item.(map[string]any) {
			where := strings.ToUpper(method) + " " + path
			o := raw.(map[string]any)
			id, _ := o["operationId"].(string)
			require.NotEmpty(t, id, "%s has an operationId", where)
			require.NotContains(t, ids, id, "%s and %s share an operationId", where, ids[id])
			ids[id] = where
			opTags, _ := o["tags"].([]any)
			require.Len(t, opTags, 1, "%s has a tag", where)
			require.Contains(t, tagNames, opTags[0], "%s's tag is described", where)

			var bodies []map[string]any
			if rb, ok := o["requestBody"].(map[string]any); ok {
				bodies = append(bodies, rb)
			}
			for _, r := range o["responses"].(map[string]any) {
				bodies = append(bodies, r.(map[string]any))
			}
			for _, b := range bodies {
				content, _ := b["content"].(map[string]any)
				if mt, ok := content["application/json"].(map[string]any); ok {
					if isBare(mt["schema"].(map[string]any), schemas) {
						bare = append(bare, where)
					}
					if mt["example"] != nil {
						examples = append(examples, where)
					}
				}
			}
		}
	}
	require.Empty(t, bare, "bodies without a typed schema")
	for _, main := range []string{"POST /v1/runs", "GET /v1/runs", "GET /v1/runs/{id}", "POST /v1/templates",
		"POST /v1/templates/{id}/runs", "POST /v1/templates/{id}/fanout"} {
		require.Contains(t, examples, main, "%s has an example", main)
	}
	require.Equal(t, "submitRun", doc["paths"].(map[string]any)["/v1/runs"].(map[string]any)["post"].(map[string]any)["operationId"])
	require.Equal(t, []any{}, doc["paths"].(map[string]any)["/v1/openapi.json"].(map[string]any)["get"].(map[string]any)["security"],
		"the document says it is open")
}

// isBare: an object schema with neither properties nor a $ref, nor a choice of shapes.
func isBare(s map[string]any, schemas map[string]any) bool {
	if r, ok := s["$ref"].(string); ok {
		name := r[strings.LastIndex(r, "/")+1:]
		target, ok := schemas[name].(map[string]any)
		return !ok || isBare(target, schemas)
	}
	if _, ok := s["oneOf"]; ok {
		return false
	}
	return s["type"] == "object" && s["properties"] == nil && s["additionalProperties"] == nil
}

// The template answers are what their new schemas say.
func TestTemplateAnswersMatchTheSchemas(t *testing.T) {
	t.Parallel()
	e, _ := templateEnv(t)
	doc := decode(t, e.do(t, http.MethodGet, "/v1/openapi.json", "", nil))
	registered := decode(t, e.do(t, http.MethodPost, "/v1/templates", adminToken, map[string]any{"id": "orders", "config": "a: 1"}))
	require.Equal(t, schemaProps(t, doc, "Template"), keys(registered))
	list := decode(t, e.do(t, http.MethodGet, "/v1/templates", viewerToken, nil))
	require.Equal(t, schemaProps(t, doc, "TemplateList"), keys(list))
	fan := decode(t, e.do(t, http.MethodPost, "/v1/templates/orders/fanout", operatorToken,
		map[string]any{"runs": []any{map[string]any{"params": map[string]any{"a": "1"}}, map[string]any{}}}))
	require.Equal(t, schemaProps(t, doc, "FanoutResponse"), keys(fan))
	for _, r := range fan["runs"].([]any) {
		require.Subset(t, schemaProps(t, doc, "FanoutResult"), keys(r.(map[string]any)))
	}
}
