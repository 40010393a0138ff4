"""The seed's scenario: a ResNet-18 backbone and a classifier, trained with Lightning.

Needs torch and lightning (``pip install 'profsight[torch]'`` after ``torch==2.13.0``).
"""
