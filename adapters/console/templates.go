package console

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/sluicehq/sluice/application/templates"
	"github.com/sluicehq/sluice/domain/pipeline"
)

type templatesData struct {
	Templates []*templates.View
}

type templateData struct {
	Template *templates.View
	Versions []templates.Version
	Fields   []field
}

// field is one input of a template's run form, generated from a typed param and its
// constraints (SPEC §14.2). The browser checks what it can (type, required, min, max,
// length, choices); the use-case checks everything again.
type field struct {
	Name, Label, Type, Description string
	Value                          string // the default
	Required, Secret, Choice       bool
	Options                        []string
	Min, Max, Step, Pattern        string
	MaxLength                      int
	Hint                           string
}

func (c *console) templatesPage(w http.ResponseWriter, r *http.Request, sess session) {
	if c.deps.Templates == nil {
		c.fail(w, r, &sess, http.StatusNotFound, "this server has no templates")
		return
	}
	list, err := c.deps.Templates.List(r.Context(), principal(sess))
	if err != nil {
		c.failErr(w, r, sess, err)
		return
	}
	c.show(w, r, sess, "templates", "Templates", "templates", templatesData{Templates: list})
}

// templatePage shows a template's newest version, its version history and, for those who may run it, the
// run form.
func (c *console) templatePage(w http.ResponseWriter, r *http.Request, sess session) {
	if c.deps.Templates == nil {
		c.fail(w, r, &sess, http.StatusNotFound, "this server has no templates")
		return
	}
	t, err := c.deps.Templates.Get(r.Context(), principal(sess), r.PathValue("id"))
	if err != nil {
		c.failErr(w, r, sess, err)
		return
	}
	vs, err := c.deps.Templates.Versions(r.Context(), principal(sess), t.ID)
	if err != nil {
		c.failErr(w, r, sess, err)
		return
	}
	d := templateData{Template: t, Versions: vs}
	for _, p := range t.Params {
		d.Fields = append(d.Fields, paramField(p))
	}
	c.show(w, r, sess, "template", "Template "+t.ID, "templates", d)
}

func paramField(p pipeline.Param) field {
	f := field{Name: "param." + p.Name, Label: p.Name, Description: p.Description, Required: p.Required && p.Default == nil,
		Secret: p.Secret, MaxLength: p.MaxLength, Pattern: p.Pattern, Min: formatValue(p.Min), Max: formatValue(p.Max)}
	if p.Default != nil && !p.Secret {
		f.Value = formatValue(p.Default)
	}
	var hints []string
	hints = append(hints, string(p.Type))
	switch p.Type {
	case pipeline.ParamInt:
		f.Type, f.Step = "number", "1"
	case pipeline.ParamFloat:
		f.Type, f.Step = "number", "any"
	case pipeline.ParamBool:
		f.Choice, f.Options = true, []string{"true", "false"}
	case pipeline.ParamDate:
		f.Type = "date"
	case pipeline.ParamDatetime:
		f.Type = "text"
		hints = append(hints, "RFC 3339, e.g. 2026-01-02T15:04:05Z")
	default:
		f.Type = "text"
		if p.Type == pipeline.ParamString && f.MaxLength == 0 {
			f.MaxLength = pipeline.DefaultMaxLength
		}
	}
	if len(p.Enum) > 0 {
		f.Choice, f.Options = true, nil
		for _, v := range p.Enum {
			f.Options = append(f.Options, formatValue(v))
		}
	}
	if p.Secret {
		f.Type, f.Choice = "password", false
		hints = append(hints, "secret: sealed, never shown")
	}
	if f.Pattern != "" {
		hints = append(hints, "pattern "+f.Pattern)
	}
	if f.Min != "" || f.Max != "" {
		hints = append(hints, fmt.Sprintf("range %s … %s", f.Min, f.Max))
	}
	f.Hint = strings.Join(hints, "; ")
	return f
}

// runTemplate starts a run of the template with the form's params, as the signed-in
// principal (a tenant principal runs it for its own tenant, as on its tenant route).
func (c *console) runTemplate(w http.ResponseWriter, r *http.Request, sess session) {
	if c.deps.Templates == nil {
		c.fail(w, r, &sess, http.StatusNotFound, "this server has no templates")
		return
	}
	p := principal(sess)
	req := templates.RunRequest{Tenant: p.Tenant, Params: map[string]string{}, Pool: strings.TrimSpace(r.PostForm.Get("pool"))}
	for k, vs := range r.PostForm {
		name, ok := strings.CutPrefix(k, "param.")
		if !ok || len(vs) == 0 || vs[0] == "" {
			continue // an empty input leaves the param to its default
		}
		req.Params[name] = vs[0]
	}
	if lb := strings.TrimSpace(r.PostForm.Get("labels")); lb != "" {
		req.Labels = map[string]string{}
		for _, pair := range strings.Split(lb, ",") {
			k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
			if !ok || strings.TrimSpace(k) == "" {
				c.fail(w, r, &sess, http.StatusUnprocessableEntity, "labels: write key=value, several separated by commas")
				return
			}
			req.Labels[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	res, err := c.deps.Templates.Run(r.Context(), p, r.PathValue("id"), req)
	if err != nil {
		c.failErr(w, r, sess, err)
		return
	}
	c.submitted(w, r, res)
}
