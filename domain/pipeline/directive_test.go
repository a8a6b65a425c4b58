package pipeline_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/domain/pipeline"
)

func TestParseTemplateForms(t *testing.T) {
	t.Parallel()
	d := func(k pipeline.DirectiveKind, arg, raw string) pipeline.Part {
		return pipeline.Part{Directive: &pipeline.Directive{Kind: k, Arg: arg, Raw: raw}}
	}
	lit := func(s string) pipeline.Part { return pipeline.Part{Literal: s} }
	cases := []struct {
		in   string
		want []pipeline.Part
	}{
		{"plain text", []pipeline.Part{lit("plain text")}},
		{"", nil},
		{"${env:PG_URL}", []pipeline.Part{d(pipeline.DirectiveEnv, "PG_URL", "${env:PG_URL}")}},
		{"${secret:db_pass_2}", []pipeline.Part{d(pipeline.DirectiveSecret, "db_pass_2", "${secret:db_pass_2}")}},
		{"${file:/run/secrets/pw.txt}", []pipeline.Part{d(pipeline.DirectiveFile, "/run/secrets/pw.txt", "${file:/run/secrets/pw.txt}")}},
		{"${file:certs/a b.pem}", []pipeline.Part{d(pipeline.DirectiveFile, "certs/a b.pem", "${file:certs/a b.pem}")}},
		{"${param.region}", []pipeline.Part{d(pipeline.DirectiveParam, "region", "${param.region}")}},
		{"${now.date}", []pipeline.Part{d(pipeline.DirectiveNow, "date", "${now.date}")}},
		{"${now.datetime}", []pipeline.Part{d(pipeline.DirectiveNow, "datetime", "${now.datetime}")}},
		{"${now.unix}", []pipeline.Part{d(pipeline.DirectiveNow, "unix", "${now.unix}")}},
		{"${backfill.start}", []pipeline.Part{d(pipeline.DirectiveBackfill, "start", "${backfill.start}")}},
		{"${backfill.end}", []pipeline.Part{d(pipeline.DirectiveBackfill, "end", "${backfill.end}")}},
		{"postgres://${env:U}@h/${param.db}?x=1", []pipeline.Part{
			lit("postgres://"), d(pipeline.DirectiveEnv, "U", "${env:U}"), lit("@h/"),
			d(pipeline.DirectiveParam, "db", "${param.db}"), lit("?x=1"),
		}},
		{"cost: $${price} and $5", []pipeline.Part{lit("cost: ${price} and $5")}},
		{"$${env:X}", []pipeline.Part{lit("${env:X}")}},
		{"a$$b", []pipeline.Part{lit("a$$b")}},
		{"$", []pipeline.Part{lit("$")}},
		{"}{$", []pipeline.Part{lit("}{$")}},
		{"$${now.date}-${now.date}", []pipeline.Part{lit("${now.date}-"), d(pipeline.DirectiveNow, "date", "${now.date}")}},
	}
	for _, tc := range cases {
		got, err := pipeline.ParseTemplate(tc.in)
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got.Parts, tc.in)
	}
}

func TestParseTemplateRefusals(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"${env:PG_URL":          "${env:PG_URL: unterminated directive",
		"abc ${":                "${: unterminated directive",
		"${}":                   "${}: empty directive",
		"${env:}":               "${env:}: missing the variable name",
		"${secret:}":            "${secret:}: missing the variable name",
		"${file:}":              "${file:}: missing the path",
		"${file:  }":            "${file:  }: missing the path",
		"${param.}":             "${param.}: missing the param name",
		"${param.Region}":       `${param.Region}: "Region" is not a valid param name`,
		"${env:1X}":             `${env:1X}: "1X" is not an environment variable name`,
		"${env:A-B}":            `${env:A-B}: "A-B" is not an environment variable name`,
		"${env.PG_URL}":         "${env.PG_URL}: write ${env:NAME}",
		"${param:x}":            "${param:x}: write ${param.NAME}",
		"${file.x}":             "${file.x}: write ${file:PATH}",
		"${now}":                "${now}: nothing else under now",
		"${now.time}":           "${now.time}: nothing else under now",
		"${now:date}":           "${now:date}: nothing else under now",
		"${now.date.x}":         "${now.date.x}: nothing else under now",
		"${backfill.middle}":    "${backfill.middle}: use ${backfill.start} or ${backfill.end}",
		"${backfill}":           "${backfill}: use ${backfill.start}",
		"${vault:x}":            `${vault:x}: unknown directive "vault"`,
		"${PG_URL}":             `${PG_URL}: unknown directive "PG_URL"`,
		"${ env:X}":             `${ env:X}: unknown directive " env"`,
		"ok ${env:A} ${nope.x}": `${nope.x}: unknown directive "nope"`,
		"${env:${X}}":           "${env:${X}: directives do not nest",
	}
	for in, want := range cases {
		_, err := pipeline.ParseTemplate(in)
		require.Error(t, err, in)
		require.ErrorContains(t, err, want, in)
		var de *pipeline.DirectiveError
		require.True(t, errors.As(err, &de), in)
	}
}

func TestTemplateSingleAndLiteral(t *testing.T) {
	t.Parallel()
	tpl, err := pipeline.ParseTemplate("${param.n}")
	require.NoError(t, err)
	d, ok := tpl.Single()
	require.True(t, ok)
	require.Equal(t, pipeline.Directive{Kind: pipeline.DirectiveParam, Arg: "n", Raw: "${param.n}"}, d)
	_, ok = tpl.Literal()
	require.False(t, ok)

	for _, s := range []string{" ${param.n}", "${param.n}${param.n}", "x", ""} {
		tpl, err := pipeline.ParseTemplate(s)
		require.NoError(t, err)
		_, ok := tpl.Single()
		require.False(t, ok, s)
	}

	tpl, err = pipeline.ParseTemplate("a $${b} c")
	require.NoError(t, err)
	s, ok := tpl.Literal()
	require.True(t, ok)
	require.Equal(t, "a ${b} c", s)

	tpl, err = pipeline.ParseTemplate("${env:A}-${file:b}")
	require.NoError(t, err)
	require.Len(t, tpl.Directives(), 2)
	require.Equal(t, pipeline.DirectiveFile, tpl.Directives()[1].Kind)
}
