/* tune_plot.c -- `cucore tune --plot FILE.svg`: a self-contained SVG (no plotting library):
 * one panel per numeric parameter and one for the model's occupancy, each the measured median
 * time of every verified configuration against that value, the best one in red. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tune.h"

#define PW 320 /* panel width and height, pixels */
#define PH 220
#define PM 40 /* margin inside a panel */

typedef struct panel {
  const char *title;
  double *x, *y;
  size_t n, hi; /* points, and the best one's (n when it is not in this panel) */
  double x0, x1, y0, y1;
} panel;

/* Parameter `p` of row r as a number (a bool as 0/1); NAN for a string. */
static double param_value(const tune_ctx *c, const cucore_tune_row *r, size_t p) {
  cucore_tune_value v;
  if (cucore_tune_space_get_value(c->space, r->config.index, p, &v) != CUCORE_OK) return NAN;
  return v.type == CUCORE_TUNE_VALUE_STRING ? NAN
         : v.type == CUCORE_TUNE_VALUE_REAL ? v.d
                                            : (double)v.i;
}

static void bounds(panel *p) {
  p->x0 = p->y0 = INFINITY, p->x1 = p->y1 = -INFINITY;
  for (size_t i = 0; i < p->n; i++) {
    p->x0 = fmin(p->x0, p->x[i]), p->x1 = fmax(p->x1, p->x[i]);
    p->y0 = fmin(p->y0, p->y[i]), p->y1 = fmax(p->y1, p->y[i]);
  }
  if (p->x1 <= p->x0) p->x1 = p->x0 + 1;
  if (p->y1 <= p->y0) p->y1 = p->y0 + 1e-9;
}

static void draw(FILE *f, const panel *p, int ox, int oy) {
  fprintf(f,
          "<g transform=\"translate(%d,%d)\"><rect width=\"%d\" height=\"%d\" fill=\"none\" "
          "stroke=\"#ccc\"/>\n<text x=\"%d\" y=\"16\" font-size=\"12\" text-anchor=\"middle\">"
          "%s</text>\n",
          ox, oy, PW, PH, PW / 2, p->title);
  fprintf(f,
          "<text x=\"4\" y=\"%d\" font-size=\"9\">%.4g ms</text><text x=\"4\" y=\"%d\" "
          "font-size=\"9\">%.4g</text>\n<text x=\"%d\" y=\"%d\" font-size=\"9\">%.4g</text>"
          "<text x=\"%d\" y=\"%d\" font-size=\"9\" text-anchor=\"end\">%.4g</text>\n",
          PM - 14, p->y1, PH - PM, p->y0, PM, PH - PM + 12, p->x0, PW - PM, PH - PM + 12, p->x1);
  for (size_t i = 0; i < p->n; i++) {
    double px = PM + (p->x[i] - p->x0) / (p->x1 - p->x0) * (PW - 2 * PM);
    double py = PH - PM - (p->y[i] - p->y0) / (p->y1 - p->y0) * (PH - 2 * PM);
    fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%d\" fill=\"%s\"/>\n", px, py,
            i == p->hi ? 4 : 2, i == p->hi ? "#d00" : "#36c");
  }
  fprintf(f, "</g>\n");
}

/* Fills panel `k` (a parameter, or the occupancy when k == nparams) from the verified rows. */
static void fill(const tune_ctx *c, const size_t *rows, size_t n, size_t k, size_t nparams,
                 panel *p) {
  p->n = 0;
  p->hi = (size_t)-1;
  for (size_t i = 0; i < n; i++) {
    const cucore_tune_row *r = &c->rows[rows[i]];
    double x = k < nparams ? param_value(c, r, k) : r->model.occupancy;
    if (isnan(x)) continue;
    if (c->sum.have_best && rows[i] == c->sum.best) p->hi = p->n;
    p->x[p->n] = x;
    p->y[p->n++] = r->stats.median;
  }
  bounds(p);
}

int tune_write_plot(const tune_ctx *c, const char *path) {
  size_t np = 0, n = 0;
  cucore_tune_space_get_param_count(c->space, &np);
  size_t *rows = calloc(c->nrows + 1, sizeof *rows);
  panel p = {0};
  p.x = calloc(c->nrows + 1, sizeof *p.x), p.y = calloc(c->nrows + 1, sizeof *p.y);
  if (!rows || !p.x || !p.y) return free(rows), free(p.x), free(p.y), CLI_EXIT_FAILURE;
  for (size_t i = 0; i < c->nrows; i++)
    if (c->rows[i].status == CUCORE_TUNE_OK) rows[n++] = i;
  cli_outfile o;
  int rc = cli_out_open(&o, "tune", "--plot", path);
  if (!rc) {
    fprintf(o.f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "font-family=\"sans-serif\">\n",
            (int)(np + 1) * (PW + 10), PH + 10);
    for (size_t k = 0; k <= np; k++) {
      cucore_tune_param_info info = {"occupancy (model)", 0, 0};
      if (k < np) cucore_tune_space_get_param(c->space, k, &info);
      p.title = info.name;
      fill(c, rows, n, k, np, &p);
      draw(o.f, &p, (int)k * (PW + 10), 5);
    }
    fprintf(o.f, "</svg>\n");
    rc = cli_out_close(&o, 1);
  }
  free(rows), free(p.x), free(p.y);
  return rc;
}
