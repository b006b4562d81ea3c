/* A data race on purpose: tests/t/70-threads.t runs it to show that
 * ThreadSanitizer reports are seen where the shim is tested. */
#include <pthread.h>
#include <stdio.h>

static int shared;

static void *bump(void *arg)
{
    (void)arg;
    for (int i = 0; i < 1000; i++)
        shared++;
    return NULL;
}

int main(void)
{
    pthread_t a, b;
    pthread_create(&a, NULL, bump, NULL);
    pthread_create(&b, NULL, bump, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("%d\n", shared);
    return 0;
}
