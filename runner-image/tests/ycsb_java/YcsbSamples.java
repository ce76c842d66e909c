import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.Vector;

import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.NumericByteIterator;
import site.ycsb.Status;
import site.ycsb.Utils;
import site.ycsb.generator.AcknowledgedCounterGenerator;
import site.ycsb.generator.DiscreteGenerator;
import site.ycsb.generator.ExponentialGenerator;
import site.ycsb.generator.HotspotIntegerGenerator;
import site.ycsb.generator.NumberGenerator;
import site.ycsb.generator.ScrambledZipfianGenerator;
import site.ycsb.generator.SequentialGenerator;
import site.ycsb.generator.SkewedLatestGenerator;
import site.ycsb.generator.UniformLongGenerator;
import site.ycsb.generator.ZipfianGenerator;
import site.ycsb.measurements.Measurements;
import site.ycsb.workloads.CoreWorkload;
import site.ycsb.workloads.TimeSeriesWorkload;

/**
 * Draws from YCSB's own generators (site.ycsb:core:0.17.0) for runner-image/tests/test_ycsb_java.py,
 * which draws the same from the runner's Python port and compares. One command per run:
 *
 *   histogram SPEC N          "value count" per distinct value of N draws
 *   sequence SPEC N           the N draws in order, one a line
 *   workload N k=v...         CoreWorkload.init(k=v...): "op NAME count" of N operation choices,
 *                             then "key NUM count" of N nextKeynum() draws
 *   keys k=v... -- NUM...     CoreWorkload.buildKeyName of each NUM, one a line
 *   fnv NUM...                Utils.fnvhash64 of each NUM, one a line
 *   zeta N THETA              ZipfianGenerator.zetastatic(N, THETA) as raw long bits
 *   zeta-grown ITEMS COUNT    zetan of a ZipfianGenerator over ITEMS items after nextLong(COUNT)
 *   acknowledge START NUM...  AcknowledgedCounterGenerator(START): lastValue after each acknowledge
 *   defaults                  CoreWorkload's NAME_PROPERTY / NAME_PROPERTY_DEFAULT pairs, "name value"
 *   timeseries LOADS RUNS THREADS k=v...
 *                             TimeSeriesWorkload.init(k=v...) twice, as a load and a run would: each
 *                             thread's LOADS doInsert calls, then (new thread states) its RUNS
 *                             doTransaction calls, as the DB interface receives them, one a line:
 *                             "THREAD OP KEY ..." (see RecordingDB), "THREAD X" for an update
 *                             that threw
 *
 * SPEC: uniform:LB:UB, zipfian:MIN:MAX, scrambled:MIN:MAX, latest:COUNTSTART,
 * hotspot:LB:UB:HOTSET:HOTOPN, sequential:START:END, exponential:PERCENTILE:RANGE.
 */
public final class YcsbSamples {
  private YcsbSamples() {
  }

  public static void main(String[] args) throws Exception {
    StringBuilder out = new StringBuilder();
    switch (args[0]) {
    case "histogram":
      histogram(generator(args[1]), Integer.parseInt(args[2]), out);
      break;
    case "sequence":
      NumberGenerator g = generator(args[1]);
      for (int i = 0, n = Integer.parseInt(args[2]); i < n; i++) {
        out.append(g.nextValue()).append('\n');
      }
      break;
    case "workload":
      workload(Integer.parseInt(args[1]), args, out);
      break;
    case "keys":
      keys(args, out);
      break;
    case "fnv":
      for (int i = 1; i < args.length; i++) {
        out.append(Utils.fnvhash64(Long.parseLong(args[i]))).append('\n');
      }
      break;
    case "zeta":
      Method zeta = ZipfianGenerator.class.getDeclaredMethod("zetastatic", long.class, double.class);
      zeta.setAccessible(true);
      double sum = (Double) zeta.invoke(null, Long.parseLong(args[1]), Double.parseDouble(args[2]));
      out.append(Double.doubleToRawLongBits(sum)).append('\n');
      break;
    case "zeta-grown":
      out.append(Double.doubleToRawLongBits(grownZeta(Long.parseLong(args[1]), Long.parseLong(args[2]))))
          .append('\n');
      break;
    case "acknowledge":
      AcknowledgedCounterGenerator counter = new AcknowledgedCounterGenerator(Long.parseLong(args[1]));
      for (int i = 2; i < args.length; i++) {
        counter.acknowledge(Long.parseLong(args[i]));
        out.append(counter.lastValue()).append('\n');
      }
      break;
    case "timeseries":
      timeseries(args, out);
      break;
    case "defaults":
      defaults(out);
      break;
    default:
      throw new IllegalArgumentException("unknown command " + args[0]);
    }
    System.out.print(out);
  }

  private static NumberGenerator generator(String spec) {
    String[] p = spec.split(":");
    switch (p[0]) {
    case "uniform":
      return new UniformLongGenerator(Long.parseLong(p[1]), Long.parseLong(p[2]));
    case "zipfian":
      return new ZipfianGenerator(Long.parseLong(p[1]), Long.parseLong(p[2]));
    case "scrambled":
      return new ScrambledZipfianGenerator(Long.parseLong(p[1]), Long.parseLong(p[2]));
    case "latest":
      return new SkewedLatestGenerator(new AcknowledgedCounterGenerator(Long.parseLong(p[1])));
    case "hotspot":
      return new HotspotIntegerGenerator(Long.parseLong(p[1]), Long.parseLong(p[2]),
          Double.parseDouble(p[3]), Double.parseDouble(p[4]));
    case "sequential":
      return new SequentialGenerator(Long.parseLong(p[1]), Long.parseLong(p[2]));
    case "exponential":
      return new ExponentialGenerator(Double.parseDouble(p[1]), Double.parseDouble(p[2]));
    default:
      throw new IllegalArgumentException("unknown generator " + spec);
    }
  }

  private static void histogram(NumberGenerator g, int n, StringBuilder out) {
    Map<Number, Integer> counts = new TreeMap<>();
    for (int i = 0; i < n; i++) {
      counts.merge(g.nextValue(), 1, Integer::sum);
    }
    counts.forEach((value, count) -> out.append(value).append(' ').append(count).append('\n'));
  }

  private static Properties properties(String[] args, int from, int to) {
    Properties p = new Properties();
    for (int i = from; i < to; i++) {
      String[] kv = args[i].split("=", 2);
      p.setProperty(kv[0], kv[1]);
    }
    return p;
  }

  private static CoreWorkload coreWorkload(Properties p) throws Exception {
    Measurements.setProperties(p);
    CoreWorkload w = new CoreWorkload();
    w.init(p);
    return w;
  }

  private static void workload(int n, String[] args, StringBuilder out) throws Exception {
    CoreWorkload w = coreWorkload(properties(args, 2, args.length));
    Field chooser = CoreWorkload.class.getDeclaredField("operationchooser");
    chooser.setAccessible(true);
    DiscreteGenerator ops = (DiscreteGenerator) chooser.get(w);
    Map<String, Integer> opCounts = new TreeMap<>();
    for (int i = 0; i < n; i++) {
      opCounts.merge(ops.nextString(), 1, Integer::sum);
    }
    opCounts.forEach((op, count) -> out.append("op ").append(op).append(' ').append(count).append('\n'));
    Method nextKeynum = CoreWorkload.class.getDeclaredMethod("nextKeynum");
    nextKeynum.setAccessible(true);
    Map<Long, Integer> keyCounts = new TreeMap<>();
    for (int i = 0; i < n; i++) {
      keyCounts.merge((Long) nextKeynum.invoke(w), 1, Integer::sum);
    }
    keyCounts.forEach((key, count) -> out.append("key ").append(key).append(' ').append(count).append('\n'));
  }

  private static void keys(String[] args, StringBuilder out) throws Exception {
    int dashes = java.util.Arrays.asList(args).indexOf("--");
    CoreWorkload w = coreWorkload(properties(args, 1, dashes));
    Method build = CoreWorkload.class.getDeclaredMethod("buildKeyName", long.class);
    build.setAccessible(true);
    for (int i = dashes + 1; i < args.length; i++) {
      out.append(build.invoke(w, Long.parseLong(args[i]))).append('\n');
    }
  }

  private static double grownZeta(long items, long itemcount) throws Exception {
    ZipfianGenerator z = new ZipfianGenerator(items);
    Method nextLong = ZipfianGenerator.class.getDeclaredMethod("nextLong", long.class);
    nextLong.setAccessible(true);
    nextLong.invoke(z, itemcount);
    Field zetan = ZipfianGenerator.class.getDeclaredField("zetan");
    zetan.setAccessible(true);
    return zetan.getDouble(z);
  }

  private static void defaults(StringBuilder out) throws Exception {
    for (Field f : CoreWorkload.class.getFields()) {
      String name = f.getName();
      if (name.endsWith("_PROPERTY_DEFAULT") || !name.endsWith("_PROPERTY")) {
        continue;
      }
      try {
        Field dflt = CoreWorkload.class.getField(name + "_DEFAULT");
        out.append(f.get(null)).append(' ').append(dflt.get(null)).append('\n');
      } catch (NoSuchFieldException e) {
        continue; // a property without a default (none is needed by the comparison)
      }
    }
    out.append(ExponentialGenerator.EXPONENTIAL_PERCENTILE_PROPERTY).append(' ')
        .append(ExponentialGenerator.EXPONENTIAL_PERCENTILE_DEFAULT).append('\n');
    out.append(ExponentialGenerator.EXPONENTIAL_FRAC_PROPERTY).append(' ')
        .append(ExponentialGenerator.EXPONENTIAL_FRAC_DEFAULT).append('\n');
    out.append("ZETAN ").append(Double.doubleToRawLongBits(ScrambledZipfianGenerator.ZETAN)).append('\n');
    out.append("ITEM_COUNT ").append(ScrambledZipfianGenerator.ITEM_COUNT).append('\n');
    out.append("ZIPFIAN_CONSTANT ").append(Double.doubleToRawLongBits(ZipfianGenerator.ZIPFIAN_CONSTANT)).append('\n');
  }

  /**
   * A DB that answers OK and prints each call: "T I|U KEY tag=value;... TIMESTAMP i|f" for an
   * insert or update (i: a long value, f: a double), "T R KEY field;..." for a read and
   * "T S KEY LENGTH field;..." for a scan (fields sorted).
   */
  private static final class RecordingDB extends DB {
    private final StringBuilder out;
    private final String timestampKey;
    private final String valueKey;
    private int thread;

    RecordingDB(StringBuilder out, Properties p) {
      this.out = out;
      this.timestampKey = p.getProperty("timestampkey", "YCSBTS");
      this.valueKey = p.getProperty("valuekey", "YCSBV");
    }

    private Status write(String op, String key, Map<String, ByteIterator> values) {
      StringBuilder tags = new StringBuilder();
      for (Map.Entry<String, ByteIterator> e : new TreeMap<>(values).entrySet()) {
        if (!e.getKey().equals(timestampKey) && !e.getKey().equals(valueKey)) {
          tags.append(tags.length() > 0 ? ";" : "").append(e.getKey()).append('=').append(e.getValue().toString());
        }
      }
      long ts = ((NumericByteIterator) values.get(timestampKey)).getLong();
      String kind = ((NumericByteIterator) values.get(valueKey)).isFloatingPoint() ? "f" : "i";
      out.append(thread).append(' ').append(op).append(' ').append(key).append(' ').append(tags)
          .append(' ').append(ts).append(' ').append(kind).append('\n');
      return Status.OK;
    }

    @Override
    public Status insert(String table, String key, Map<String, ByteIterator> values) {
      return write("I", key, values);
    }

    @Override
    public Status update(String table, String key, Map<String, ByteIterator> values) {
      return write("U", key, values);
    }

    @Override
    public Status read(String table, String key, Set<String> fields, Map<String, ByteIterator> result) {
      out.append(thread).append(" R ").append(key).append(' ').append(String.join(";", new TreeSet<>(fields)))
          .append('\n');
      return Status.OK;
    }

    @Override
    public Status scan(String table, String key, int count, Set<String> fields,
        Vector<HashMap<String, ByteIterator>> result) {
      out.append(thread).append(" S ").append(key).append(' ').append(count).append(' ')
          .append(String.join(";", new TreeSet<>(fields))).append('\n');
      return Status.OK;
    }

    @Override
    public Status delete(String table, String key) {
      out.append(thread).append(" D ").append(key).append('\n');
      return Status.OK;
    }
  }

  private static void timeseries(String[] args, StringBuilder out) throws Exception {
    int loads = Integer.parseInt(args[1]);
    int runs = Integer.parseInt(args[2]);
    int threads = Integer.parseInt(args[3]);
    Properties p = properties(args, 4, args.length);
    p.setProperty("threadcount", String.valueOf(threads));
    Measurements.setProperties(p);
    RecordingDB db = new RecordingDB(out, p);
    for (int phase = 0; phase < 2; phase++) {
      TimeSeriesWorkload w = new TimeSeriesWorkload();
      w.init(p);
      for (int t = 0; t < threads; t++) {
        Object state = w.initThread(p, t, threads);
        db.thread = t;
        for (int i = 0; i < (phase == 0 ? loads : runs); i++) {
          if (phase == 0) {
            w.doInsert(db, state);
          } else {
            try {
              w.doTransaction(db, state);
            } catch (IllegalArgumentException e) {
              // an update before the thread's second timestamp: Random.nextInt(0), which ends a
              // YCSB client thread; "T X" here, and the run goes on
              out.append(t).append(" X\n");
            }
          }
        }
      }
    }
  }
}
