// The tests' throwaway redis-server processes; the code lives in scripts/ because the benchmark uses it too.
export * from '../../scripts/redis-server';
