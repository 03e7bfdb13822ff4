import { heapVerdict, type MemorySample } from './support/memory';

const MB = 1024 * 1024;

/** Readings as [heap used, young generation, old generation (MB), full collections so far]. */
type Reading = [number, number, number, number];

const samples = (readings: readonly Reading[]): MemorySample[] =>
  readings.map(([heap, young, old, fullCollections]) => ({ rss: 0, heap: heap * MB, young: young * MB, old: old * MB, fullCollections }));

/** The same process with a leak: `mbPerReading` more kept at every reading (heap and old generation). */
const leaking = (readings: readonly Reading[], mbPerReading: number): Reading[] =>
  readings.map(([heap, young, old, full], i) => [heap + mbPerReading * i, young, old + mbPerReading * i, full]);

// Readings of /metrics about a second apart under the overload phase's load (300 clients without
// pause, a gateway limited to 32 requests in flight; two loaded cores), on processes without a
// leak: heap snapshots of sales replicas under the same load (each after a full collection)
// weighed 43.0 MB after 20 s and 43.2 MB after 150 s, and 43.2 MB after 20 s and after 240 s. The
// first replica's heap used climbs from 60 to 158 MB between two full collections, then falls to
// 46. Its readings carry no count of full collections, as when prom-client misses one (it records
// the first GC of each batch its observer gets): the old generation's drop tells them.
const SALES_ONE_FULL_COLLECTION_IN_45_S: Reading[] = [
  [54.1, 17.7, 24.7, 0],
  [53.6, 12.6, 27.8, 0],
  [48.9, 2.6, 32.8, 0],
  [68.2, 21.3, 33.3, 0],
  [64.4, 15.4, 35.1, 0],
  [71.1, 21.7, 35.3, 0],
  [67, 14.7, 38, 0],
  [57, 2.3, 40.3, 0],
  [72.2, 16.8, 40.9, 0],
  [67.3, 9.4, 43.3, 0],
  [82.9, 24.1, 44.1, 0],
  [78.8, 17.5, 46.6, 0],
  [60.5, 18.2, 30.9, 0],
  [64.5, 20.2, 32.8, 0],
  [96.2, 49.9, 34.6, 0],
  [78.5, 28.8, 38.1, 0],
  [97.3, 46.3, 39.3, 0],
  [69, 13.8, 43.4, 0],
  [83.8, 27.8, 44.1, 0],
  [98.3, 41.5, 45, 0],
  [78.6, 16.8, 49.8, 0],
  [105.9, 42.5, 51.4, 0],
  [86.1, 18, 56, 0],
  [103.8, 34.7, 57, 0],
  [77.3, 3.9, 61.3, 0],
  [95.6, 21.4, 62.1, 0],
  [111.4, 36.3, 63, 0],
  [97.3, 17, 68.1, 0],
  [128.2, 45.9, 70.1, 0],
  [100.7, 14.2, 74.2, 0],
  [112, 24.8, 75, 0],
  [131.6, 43.2, 76.2, 0],
  [98.2, 5.8, 80.1, 0],
  [112.3, 19, 80.9, 0],
  [128.1, 33.6, 81.9, 0],
  [107.3, 8, 86.6, 0],
  [116.5, 16.8, 86.9, 0],
  [146.2, 44.5, 88.9, 0],
  [118.7, 12.6, 93.2, 0],
  [136.2, 29.1, 94.2, 0],
  [153.5, 45.4, 95.3, 0],
  [134.3, 21.5, 100, 0],
  [154.7, 40.4, 101.4, 0],
  [123.9, 5.4, 105.5, 0],
  [156.3, 36, 107.2, 0],
  [136, 10.7, 112.2, 0],
  [158.2, 31.4, 113.7, 0],
  [46.4, 2.9, 30.9, 0],
  [66.4, 21.4, 32.4, 0],
  [78.5, 32.9, 33, 0],
  [61.1, 13.8, 34.7, 0],
  [75.5, 27.3, 35.6, 0],
  [95.5, 45.9, 36.9, 0],
  [63.7, 10, 41, 0],
  [73.9, 19.4, 41.8, 0],
  [82.3, 27.3, 42.3, 0],
  [106.8, 50.2, 43.8, 0],
  [83.6, 22.9, 48, 0],
  [106.8, 44.4, 49.6, 0],
  [72.7, 6.5, 53.5, 0],
  [96, 28.1, 55.1, 0],
  [110.1, 41.4, 55.9, 0],
  [76.4, 4.5, 59.1, 0],
  [88.5, 15.9, 59.9, 0],
  [107.5, 33.5, 61.2, 0],
  [126.2, 51.3, 62.1, 0],
  [92.4, 14.5, 65.1, 0],
  [99.1, 20.8, 65.5, 0],
  [118.2, 38.6, 66.8, 0],
  [90.8, 7.8, 70.2, 0],
  [105.2, 21.3, 71.1, 0],
];
const SALES_FULL_COLLECTIONS_EVERY_FEW_SECONDS: Reading[] = [
  [53.4, 17.4, 24.7, 0],
  [50.3, 9.8, 27.8, 0],
  [50, 4, 32.9, 0],
  [71.1, 24.5, 33.3, 0],
  [75, 25.4, 35.8, 0],
  [74.9, 22.3, 38.7, 0],
  [68.3, 13, 41.3, 0],
  [60.2, 2.7, 43.4, 0],
  [68.4, 10.6, 43.8, 0],
  [71.2, 10.5, 46.4, 0],
  [63.7, 20.3, 31.9, 1],
  [64, 19, 33.3, 1],
  [87.9, 41.4, 34.8, 1],
  [51.2, 9.3, 30.3, 2],
  [71.9, 28.6, 31.7, 2],
  [48.5, 3.7, 33.1, 2],
  [70.4, 24.1, 34.7, 2],
  [57, 5.5, 39.7, 2],
  [43.6, 1, 31, 3],
  [71.9, 27.6, 32.6, 3],
  [91.2, 45.8, 33.6, 3],
  [69.4, 22.7, 34.9, 3],
  [95.2, 47, 36.4, 3],
  [79.9, 26.1, 41.8, 3],
  [97.7, 42.8, 43, 3],
  [89.8, 29.9, 47.9, 3],
  [68.3, 3.6, 52.7, 3],
  [82.1, 16.5, 53.6, 3],
  [94.6, 28.5, 54.1, 3],
  [42.8, 1.1, 29.6, 4],
  [57, 14.4, 30.4, 4],
  [80.6, 36.6, 31.7, 4],
  [57.7, 12.2, 33.2, 4],
  [75.3, 28.6, 34.3, 4],
  [52.6, 11.1, 30.2, 5],
  [79.2, 36.1, 31.8, 5],
  [60.7, 15.9, 33.5, 5],
  [80.1, 34, 34.8, 5],
  [43.3, 4.8, 28.4, 6],
  [64.4, 24.7, 29.5, 6],
  [45.9, 4.6, 31.3, 6],
  [75.7, 32.8, 32.7, 6],
  [54.2, 6.3, 37.7, 6],
  [82.3, 32.8, 39.3, 6],
  [60.6, 6.4, 44, 6],
  [86.8, 31.1, 45.5, 6],
  [52.9, 13.6, 29.2, 7],
  [80.4, 39.3, 30.9, 7],
  [54, 11.7, 32.2, 7],
];
const GATEWAY_NO_FULL_COLLECTION_FOR_45_S: Reading[] = [
  [70.3, 14.8, 39.4, 0],
  [67.9, 9.9, 41.3, 0],
  [80.6, 22.2, 41.3, 0],
  [57.6, 9, 35.5, 1],
  [76.6, 27.7, 35.6, 1],
  [89.8, 40.7, 35.7, 1],
  [56, 6.7, 35.7, 1],
  [67.2, 17.7, 35.8, 1],
  [77, 27.3, 35.8, 1],
  [92.3, 42.3, 35.9, 1],
  [62.7, 9.2, 39.4, 1],
  [78.4, 24.7, 39.5, 1],
  [92.1, 38.3, 39.6, 1],
  [104.5, 50.6, 39.7, 1],
  [72.2, 15.3, 42.6, 1],
  [86.3, 29.2, 42.7, 1],
  [100.9, 43.7, 42.8, 1],
  [72.1, 11.4, 46.3, 1],
  [86.8, 26, 46.4, 1],
  [102.5, 41.5, 46.5, 1],
  [72, 7.2, 50.3, 1],
  [90.3, 25.3, 50.4, 1],
  [106.6, 41.4, 50.6, 1],
  [78.3, 9.1, 54.5, 1],
  [90.8, 21.5, 54.6, 1],
  [110, 40.4, 54.8, 1],
  [77.7, 4.3, 58.7, 1],
  [89.3, 15.7, 58.7, 1],
  [100.7, 26.9, 58.8, 1],
  [112.8, 38.8, 58.9, 1],
  [122.7, 48.7, 58.9, 1],
  [92.4, 14.5, 62.7, 1],
  [106.1, 28.1, 62.8, 1],
  [118.8, 40.7, 62.8, 1],
  [86.8, 5.4, 66.1, 1],
  [101.1, 19.6, 66.2, 1],
  [117, 35.3, 66.3, 1],
  [129.5, 47.8, 66.4, 1],
  [95.3, 9.8, 70.2, 1],
  [106.6, 21.1, 70.2, 1],
  [122.6, 36.8, 70.4, 1],
  [95.4, 5.5, 74.5, 1],
  [107.5, 17.5, 74.6, 1],
  [121.5, 31.4, 74.7, 1],
  [137.5, 47.3, 74.9, 1],
  [109, 14.8, 78.8, 1],
  [125.5, 31.1, 79, 1],
  [138.2, 43.7, 79.1, 1],
  [56.3, 5.4, 36.4, 2],
];

describe('heapVerdict: whether a heap grows over the overload soak', () => {
  it.each([
    ['a sales replica whose heap climbs to 158 MB between full collections and falls back to 46', SALES_ONE_FULL_COLLECTION_IN_45_S],
    ['a sales replica collecting every few seconds', SALES_FULL_COLLECTIONS_EVERY_FEW_SECONDS],
    ['the overloaded gateway, 45 s without a full collection', GATEWAY_NO_FULL_COLLECTION_FOR_45_S],
  ])('finds no leak in %s', (_what, readings) => {
    const verdict = heapVerdict(samples(readings));
    expect(verdict).toMatchObject({ leak: false, judged: true });
    expect(verdict.late).toBeLessThan(verdict.early * 1.2 + 20);
  });

  it('tells a full collection by the old generation dropping when prom-client did not count it', () => {
    const verdict = heapVerdict(samples(SALES_ONE_FULL_COLLECTION_IN_45_S.slice(20)));
    expect(verdict.afterCollections.map(Math.round)).toEqual([44]);
  });

  it.each([
    ['a sales replica', SALES_ONE_FULL_COLLECTION_IN_45_S],
    ['the gateway', GATEWAY_NO_FULL_COLLECTION_FOR_45_S],
  ])('finds the leak of %s that keeps 1.5 MB more at every reading', (_what, readings) => {
    const verdict = heapVerdict(samples(leaking(readings, 1.5)));
    expect(verdict).toMatchObject({ leak: true, judged: true });
    expect(Math.min(...verdict.afterCollections)).toBeGreaterThan(verdict.early * 1.2 + 20);
  });

  it('does not call garbage a leak: above the limit without a full collection in the second half is not judged', () => {
    // The old generation filling with garbage (3 MB a reading; 2 were measured) and no full
    // collection yet: its lowest reading in the second half is no measure of what is kept.
    const climbing: Reading[] = Array.from({ length: 40 }, (_, i) => {
      const young = 3 + ((i * 13) % 47);
      const old = 30 + 3 * i;
      return [old + 10 + young, young, old, 4];
    });
    expect(heapVerdict(samples(climbing))).toMatchObject({ leak: false, judged: false, afterCollections: [] });
  });
});
