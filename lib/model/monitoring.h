/*
 * monitoring.h - TF Serving's --monitoring_config_file: a text-format
 * MonitoringConfig (tensorflow_serving/config/monitoring_config.proto).
 *
 *   prometheus_config {
 *     enable: true
 *     path: "/monitoring/prometheus/metrics"
 *   }
 *
 * Fields taken: prometheus_config { enable, path }; path defaults to
 * TF Serving's "/monitoring/prometheus/metrics" and must start with
 * "/". Anything else is refused with its place.
 */
#ifndef TFK_MONITORING_H
#define TFK_MONITORING_H

#include "util/err.h"

#include <stddef.h>

#define TFK_PROMETHEUS_PATH "/monitoring/prometheus/metrics"

struct tfk_monitoring_config {
	int prometheus;			/* enable */
	char path[256];			/* where the metrics are served */
};

int tfk_monitoring_config_parse(const char *text, size_t n, const char *file,
				struct tfk_monitoring_config *c,
				struct tfk_err *err);
/* Read and parse a file (TFK_EIO when it cannot be read). */
int tfk_monitoring_config_load(const char *path,
			       struct tfk_monitoring_config *c,
			       struct tfk_err *err);

#endif
