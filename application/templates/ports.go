package templates

import (
	"context"
	"time"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/pool"
)

// Template is one version of a registered template.
type Template struct {
	ID           string
	Version      int
	Config       string // as registered, or a vault ciphertext (base64) when ConfigSealed
	ConfigSealed bool
	Pool         string // the template's pool; "" = the config's, then default
	PoolOverride pool.Override
	// Tenants may run it on their tenant route; AllTenants is `tenants: "*"`.
	Tenants    []string
	AllTenants bool
	CreatedBy  string
	CreatedAt  time.Time
}

// Version is one stored version of a template as its history lists it: the row's
// metadata, never its config (which may hold secrets).
type Version struct {
	Version      int
	ConfigSealed bool
	Pool         string
	PoolOverride pool.Override
	Tenants      []string
	AllTenants   bool
	CreatedBy    string
	CreatedAt    time.Time
}

// Store keeps templates. Errors: run.ErrNotFound for a missing id; ErrInUse from Delete.
type Store interface {
	// AddTemplate stores t as the next version of t.ID (1 for a new id) and sets
	// t.Version; the version is chosen and inserted in one transaction.
	AddTemplate(ctx context.Context, t *Template) error
	// LatestTemplate returns the newest version of id.
	LatestTemplate(ctx context.Context, id string) (*Template, error)
	// ListTemplates returns the newest version of every template, by id.
	ListTemplates(ctx context.Context) ([]*Template, error)
	// TemplateVersions lists every version of id, newest first, without its config;
	// run.ErrNotFound when id has none.
	TemplateVersions(ctx context.Context, id string) ([]Version, error)
	// DeleteTemplate deletes every version of id unless a schedule uses it or a queued or
	// pending run records it (ErrInUse); the checks and the delete are one transaction.
	DeleteTemplate(ctx context.Context, id string) error
}

// Submitter is the one submit funnel (runs.Service).
type Submitter interface {
	Submit(ctx context.Context, req runs.SubmitRequest) (runs.SubmitResult, error)
}
