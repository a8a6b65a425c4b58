package mcp

import (
	"context"

	"github.com/sluicehq/sluice/application/approvals"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/application/templates"
	"github.com/sluicehq/sluice/domain/pipeline"
)

// RunService is what the run tools need from application/runs; every call carries the
// principal so the service enforces roles and tenancy itself.
type RunService interface {
	Submit(ctx context.Context, req runs.SubmitRequest) (runs.SubmitResult, error)
	Get(ctx context.Context, p runs.Principal, id string) (*runs.Record, error)
	List(ctx context.Context, p runs.Principal, f runs.Filter) (runs.Page, error)
	// Cancel returns immediate=true when the run ended at once (or was already terminal).
	Cancel(ctx context.Context, p runs.Principal, id string) (rec *runs.Record, immediate bool, err error)
	Logs(ctx context.Context, p runs.Principal, id string, after int64, limit int) (runs.LogPage, error)
	// Validate answers what Submit would for config without creating a run: the
	// config's warnings, or the error with its paths.
	Validate(ctx context.Context, p runs.Principal, config []byte, params map[string]string, pool string) ([]string, error)
}

// TemplateService is what the template tools need from application/templates.
type TemplateService interface {
	List(ctx context.Context, p runs.Principal) ([]*templates.View, error)
	Get(ctx context.Context, p runs.Principal, id string) (*templates.View, error)
	Run(ctx context.Context, p runs.Principal, id string, req templates.RunRequest) (runs.SubmitResult, error)
}

// ApprovalService is what the change-request tools need from application/approvals.
type ApprovalService interface {
	List(ctx context.Context, p runs.Principal, f approvals.Filter) ([]*approvals.ChangeRequest, error)
	Get(ctx context.Context, p runs.Principal, id string) (*approvals.ChangeRequest, error)
}

// Connectors lists the registered connector specs.
type Connectors interface {
	Specs() []pipeline.Spec
}

// Cluster reports the members, their pools and the pending runs per pool.
type Cluster interface {
	Status(ctx context.Context) (ClusterStatus, error)
}

// ClusterStatus is what cluster_status answers.
type ClusterStatus struct {
	Enabled       bool           `json:"enabled" jsonschema:"whether this server runs with --cluster"`
	Instances     int            `json:"instances" jsonschema:"live members"`
	HistoryOK     bool           `json:"history_ok" jsonschema:"whether the history answers"`
	Draining      bool           `json:"draining" jsonschema:"whether this member is shutting down and refuses new runs"`
	Pools         []string       `json:"pools" jsonschema:"the pools this member serves"`
	PendingByPool map[string]int `json:"pending_by_pool" jsonschema:"pending runs per pool; pools with none are absent"`
	Members       []Member       `json:"members" jsonschema:"the live members"`
}

// Member is one live member.
type Member struct {
	InstanceID    string   `json:"instance_id"`
	Listen        string   `json:"listen"`
	Pools         []string `json:"pools"`
	InFlight      int      `json:"in_flight"`
	MaxConcurrent int      `json:"max_concurrent"`
}

// Classifier turns an error into the REST answer of SPEC §2.9: code, redacted message and
// details. known is false when no row of the error table matches.
type Classifier func(err error) (code, message string, details map[string]any, known bool)
