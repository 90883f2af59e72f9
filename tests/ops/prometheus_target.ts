// SPDX-License-Identifier: Apache-2.0
// The query of a Prometheus panel target, as Grafana's Prometheus data source
// stores it (its PromQuery: the common DataQuery plus these fields). @grafana/schema
// carries the common DataQuery but not the Prometheus data source's own fields, so
// they are listed here; check_dashboard.js turns this into JSON Schema.
import { DataQuery } from './node_modules/@grafana/schema/dist/types/common/common.gen';

export interface PrometheusTarget extends DataQuery {
  datasource: { type: 'prometheus'; uid: string };
  expr: string;
  legendFormat?: string;
  editorMode?: 'code' | 'builder';
  format?: 'time_series' | 'table' | 'heatmap';
  instant?: boolean;
  range?: boolean;
  exemplar?: boolean;
  interval?: string;
  intervalFactor?: number;
}
